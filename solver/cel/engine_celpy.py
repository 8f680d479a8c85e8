"""Placeholder while the celpy engine is written."""
NAME = "celpy"


def available() -> bool:
    return True


class CelpyEngine:
    name = NAME
