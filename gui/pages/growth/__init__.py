"""The Growth tab: six size knobs from the sidebar's config and the sizes they give."""
