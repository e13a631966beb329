"""The u-moec-tiny config: one typed schema for YAML, CLI, cockpit form and docs (no torch)."""
from .errors import ConfigError, Issue
from .io import (
                 apply_overrides,
                 dumps,
                 leading_comment,
                 load,
                 load_preset,
                 loads,
                 parse_override,
                 preset_names,
                 read_config_file,
                 save,
                 to_dict,
)
from .registry import all_fields, fields_by_key, get_value, section_fields, section_names
from .schema import BLOCK_ALPHABET, SECTION_TITLES, Config
from .validate import FieldError, build, coerce, cross_check, warnings

__all__ = [
                 "BLOCK_ALPHABET",
                 "SECTION_TITLES",
                 "Config",
                 "ConfigError",
                 "FieldError",
                 "Issue",
                 "all_fields",
                 "apply_overrides",
                 "build",
                 "coerce",
                 "cross_check",
                 "dumps",
                 "fields_by_key",
                 "get_value",
                 "leading_comment",
                 "load",
                 "load_preset",
                 "loads",
                 "parse_override",
                 "preset_names",
                 "read_config_file",
                 "save",
                 "section_fields",
                 "section_names",
                 "to_dict",
                 "warnings",
]
