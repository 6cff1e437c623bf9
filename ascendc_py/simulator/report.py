"""The result of a launch: what ran, where the time went on the host."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Report:
    """Returned by every launch ``k[block_dim](...)``.

    ``wall_seconds`` is host time spent running the blocks; ``prepare_seconds`` the time to bind
    arguments and find or compile the native code (``code_origin`` says which: 'memory',
    'disk' or 'compiled'); ``stage_seconds`` the compile time per pipeline stage.
    """

    kernel: str
    block_dim: int
    platform: str
    wall_seconds: float
    prepare_seconds: float
    code_origin: str
    compile_seconds: float = 0.0
    stage_seconds: dict = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"kernel {self.kernel}[{self.block_dim}] on {self.platform}",
                 f"  host run time      {self.wall_seconds * 1e3:9.3f} ms",
                 f"  prepare            {self.prepare_seconds * 1e3:9.3f} ms "
                 f"(code from {self.code_origin})"]
        if self.stage_seconds:
            stages = ", ".join(f"{k} {v * 1e3:.1f}" for k, v in self.stage_seconds.items())
            lines.append(f"  compile stages ms  {stages}")
        return "\n".join(lines)
