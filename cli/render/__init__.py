"""Rendering for people and for kubectl's output forms, kept apart from the commands' logic."""
