"""Streaming tool calls, tracked and run as declared statecharts."""
