"""The precision policy: scopes, the per-call argument, the libraries' switches and the user's own settings."""
