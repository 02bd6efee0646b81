"""Handoff between libraries: ua.to, ua.from_dlpack, mixed calls, the weak cache and its C path."""
