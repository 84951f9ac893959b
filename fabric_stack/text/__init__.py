"""How values are written in messages: number formatting, credentials masked in URLs.

Layer 0 (foundation)."""
