"""The Datasets tab: the datasets folder, a preview, and new-dataset builds."""
