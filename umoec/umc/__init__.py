"""The `umc` command: compress files with a coding model, with the habits of zstd and xz.

    main.py     the command line: flags, subcommand dispatch, the loop over files, exit codes
    names.py    where each input's output goes (FILE -> FILE.umc and back), refusals
    files.py    one file through the codec, all-or-nothing (imports numpy: load it late)
    listing.py  `umc -l`: what a .umc header says, read without decoding
    models.py   `umc model list|info|import|remove|export`
The user's manual is docs/umc.md.
"""
