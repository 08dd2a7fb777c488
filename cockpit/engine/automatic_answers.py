"""Which questions a session's agent gets answered without asking the user: the engine's own
policy (tests give one), then what `allow_automatically` set for the session (`cockpit run
--yes`, `--allow read,edit`). The rules of the policy file come after these, in the
permission broker."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.api import PermissionRequest, policy_choice
from cockpit.engine.permission_broker import AutoAnswer


class AutomaticAnswers:
    """The answers each session takes without asking, decided before the rules and the user."""

    def __init__(self, auto_answer: AutoAnswer | None = None) -> None:
        self.auto_answer = auto_answer
        self._allowed: dict[str, frozenset[str] | None] = {}
        """Sessions whose questions are allowed, and of which kinds (None: all)."""

    def allow(self, session_id: str, kinds: Sequence[str] | None = None) -> None:
        """Allow this session's questions: every one (`kinds` None) or those of these kinds."""
        self._allowed[session_id] = None if kinds is None else frozenset(kinds)

    def for_session(self, session_id: str) -> AutoAnswer:
        """The policy the session's live session asks first (it reads the current state, so
        an `allow` made after the session started still counts)."""

        def policy(request: PermissionRequest) -> str | None:
            if self.auto_answer is not None and (chosen := self.auto_answer(request)) is not None:
                return chosen
            if session_id not in self._allowed:
                return None
            kinds = self._allowed[session_id]
            if kinds is not None and request.kind not in kinds:
                return None
            option = policy_choice(request.options, allow=True)
            return str(option["optionId"]) if option is not None else None

        return policy
