"""The one error type the CLI turns into a single line and a non-zero exit."""


class IsaforgeError(Exception):
    """Something the user can fix; the message says what is wrong and how to fix it, in one line."""
