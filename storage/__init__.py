"""Durable records (SQLModel) and Redis state (budgets, dedup, caches)."""
