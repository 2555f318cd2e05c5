"""Bridges to other tools: TRL reward functions, JSONL/parquet exports for SE-Bench and verl."""
