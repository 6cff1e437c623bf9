"""The simulated Ascend AI Core: machine configurations (and, later, memory, pipes and timing)."""
from .config import (ASCEND910B1, ASCEND910B2, ASCEND910B3, ASCEND910B4, DEFAULT_PLATFORM,
                     PLATFORMS, ChipConfig, current_platform, get_platform, replace, set_platform,
                     using_platform)

__all__ = [
    "ASCEND910B1", "ASCEND910B2", "ASCEND910B3", "ASCEND910B4", "DEFAULT_PLATFORM", "PLATFORMS",
    "ChipConfig", "current_platform", "get_platform", "replace", "set_platform", "using_platform",
]
