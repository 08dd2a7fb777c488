"""`python -m cockpit.plan_server`: serve the plan tool on stdio until stdin closes."""

from cockpit.plan_server.server import main

if __name__ == "__main__":
    main()
