"""The Compression tab: compress a file with a coding model, verified round trip, peers side by side."""
