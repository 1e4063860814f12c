"""What every CFR trainer reports while it runs: TensorBoard scalars and progress (one module that the exact and
the sampling trainers both import, so neither imports the other for it)."""

from __future__ import annotations

from typing import TextIO


class Logger:
    """TensorBoard scalars when ``logdir`` is set (torch's SummaryWriter), otherwise nothing. A run resumed at
    iteration ``resumed_at`` purges what the stopped run logged after its checkpoint, which the resumed run logs
    again (else every curve loops back at the resume)."""

    def __init__(self, logdir: str | None, resumed_at: int = 0):
        self.writer = None
        if logdir:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(log_dir=logdir, purge_step=resumed_at + 1 if resumed_at else None)

    def scalars(self, step: int, values: dict) -> None:
        if self.writer is not None:
            for name, value in values.items():
                self.writer.add_scalar(name, float(value), step)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.flush()
            self.writer.close()


def _progress(enabled: bool, total: int, initial: int, desc: str, out: TextIO):
    from training.progress import progress_meter

    return progress_meter(total, desc, "it", enabled, initial=initial, file=out, mininterval=0.5)
