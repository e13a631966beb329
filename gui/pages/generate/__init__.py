"""The Generate tab: sampling from a checkpoint, streamed, and surprisal colouring."""
