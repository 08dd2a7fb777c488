"""The plan Cockpit keeps for each session: written by the plan tool the agent is handed, by
the agent's own ACP plan updates, or by the user; served to the plan tool on a private
socket of the engine's own (`cockpit.plan_protocol`)."""

from cockpit.engine.plans.keeper import PlanKeeper

__all__ = ["PlanKeeper"]
