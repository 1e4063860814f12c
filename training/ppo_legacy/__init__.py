"""PPO with action masking and league self-play (``train.py`` reads top to bottom)."""
