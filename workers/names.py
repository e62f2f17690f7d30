"""Task and queue names as constants: one place to look them up (also used by routes and Flower)."""

Q_PLAN = "plan"
Q_RETRIEVE = "retrieve"
Q_REDUCE = "reduce"
Q_LLM = "llm"
Q_DELIVER = "deliver"
Q_TOOLS = "tools"  # tenants' HTTP APIs: a slow one never starves document retrieval
Q_SOURCES = "sources"  # knowledge source syncs: a big help center never delays an investigation
ALL_QUEUES = (Q_PLAN, Q_RETRIEVE, Q_REDUCE, Q_LLM, Q_DELIVER, Q_TOOLS, Q_SOURCES)

# Message priorities (kombu's Redis transport: one list per step, priority 0 consumed first, across every
# queue a worker reads). `app.admission.priority` gives a lightly loaded tenant's steps the low numbers.
PRIORITY_STEPS = tuple(range(10))
PRIORITY_SEP = "\x06\x16"  # kombu's Redis transport: `<queue>\x06\x16<priority>` holds priority > 0


def broker_key_prefix(redis_prefix: str) -> str:
    """What kombu puts before every broker and result-backend key of a deployment (`global_keyprefix`)."""
    return f"{redis_prefix}:celery:"


def queue_keys(queue: str) -> list[str]:
    """The Redis lists (without the key prefix) holding `queue`'s messages, highest priority first."""
    return [queue if p == 0 else f"{queue}{PRIORITY_SEP}{p}" for p in PRIORITY_STEPS]

T_START = "sleuth.start"
T_RETRIEVE = "sleuth.retrieve"
T_TOOL = "sleuth.tool_call"
T_REDUCE = "sleuth.reduce"
T_HOP_FAILED = "sleuth.hop_failed"
T_SYNTHESIZE = "sleuth.synthesize"
T_DELIVER = "sleuth.deliver"
T_WATCHDOG = "sleuth.watchdog"
T_SOURCES_DUE = "sleuth.sources_due"
T_SOURCE_SYNC = "sleuth.source_sync"
T_SOURCE_BATCH = "sleuth.source_batch"
T_RETENTION = "sleuth.retention"

ROUTES = {
    T_START: Q_PLAN,
    T_RETRIEVE: Q_RETRIEVE,
    T_TOOL: Q_TOOLS,
    T_REDUCE: Q_REDUCE,
    T_HOP_FAILED: Q_REDUCE,
    T_SYNTHESIZE: Q_LLM,
    T_DELIVER: Q_DELIVER,
    T_WATCHDOG: Q_PLAN,
    T_SOURCES_DUE: Q_SOURCES,
    T_SOURCE_SYNC: Q_SOURCES,
    T_SOURCE_BATCH: Q_SOURCES,
    T_RETENTION: Q_SOURCES,  # background work, off the investigations' queues
}
