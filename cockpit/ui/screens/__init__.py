"""Cockpit's dialogs, one module per dialog or kind of dialog, each a `Dialog`
(`cockpit.ui.dialog`): a new session (`new_session`), the inbox of what waits for the
user (`inbox`), the help screen (`help`), the dialogs that ask one thing (`questions`:
rename, confirm, the agent's options) and the screens read at one's pace (`reading`: a
plan, lasting text)."""
