"""The service and its clients, in processes of their own."""
