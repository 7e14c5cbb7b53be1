"""The LangGraph-Platform-shaped JSON API over durable sessions: assistants, threads, runs, SSE."""
