"""The reproducibility verifier: replay stored results through the workers' core, compare bytes.

``Verifier(store, settings).run(selection)`` checks a selection of stored results and
records the run; ``replay_one`` checks one key. See docs/adr/0007-verifier.md.
"""

from .models import Outcome, Selection, Verdict, VerificationRun
from .replay import Replayer
from .verifier import Verifier, check_keys

__all__ = ["Outcome", "Replayer", "Selection", "Verdict", "VerificationRun", "Verifier",
           "check_keys"]
