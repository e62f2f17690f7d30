"""The one settings class of Sleuth; nothing else reads the environment."""

from config.settings import Settings, get_settings

__all__ = ["Settings", "get_settings"]
