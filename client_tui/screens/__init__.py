"""The client's screens: connect, lobby, game, help, and the modal dialogs."""
