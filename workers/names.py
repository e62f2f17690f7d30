"""Task and queue names as constants: one place to look them up (also used by routes and Flower)."""

Q_PLAN = "plan"
Q_RETRIEVE = "retrieve"
Q_REDUCE = "reduce"
Q_LLM = "llm"
Q_DELIVER = "deliver"
Q_TOOLS = "tools"  # tenants' HTTP APIs: a slow one never starves document retrieval
ALL_QUEUES = (Q_PLAN, Q_RETRIEVE, Q_REDUCE, Q_LLM, Q_DELIVER, Q_TOOLS)

T_START = "sleuth.start"
T_RETRIEVE = "sleuth.retrieve"
T_TOOL = "sleuth.tool_call"
T_REDUCE = "sleuth.reduce"
T_HOP_FAILED = "sleuth.hop_failed"
T_SYNTHESIZE = "sleuth.synthesize"
T_DELIVER = "sleuth.deliver"
T_WATCHDOG = "sleuth.watchdog"

ROUTES = {
    T_START: Q_PLAN,
    T_RETRIEVE: Q_RETRIEVE,
    T_TOOL: Q_TOOLS,
    T_REDUCE: Q_REDUCE,
    T_HOP_FAILED: Q_REDUCE,
    T_SYNTHESIZE: Q_LLM,
    T_DELIVER: Q_DELIVER,
    T_WATCHDOG: Q_PLAN,
}
