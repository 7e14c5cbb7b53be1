"""The service layer: what the API's routes and the inbox's pages do with the sessions, through the
server process's one SessionManager (``sessions``) and the one way an approval is decided
(``decisions``). No route reads a manager's stores, scanned checkpoints or checkpointer."""
