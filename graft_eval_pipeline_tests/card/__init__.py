"""Tests of the card engine: risk floor, input preparation, generation, prompts and LLM clients."""
