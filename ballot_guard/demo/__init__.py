"""The bundled example repository and the walk through every verdict.

``example/`` holds the files of a small billing service (package data, copied
as they are); ``build.py`` turns them into a git repository with a pin;
``scenarios.py`` lists the steps as data; ``play.py`` runs them through the
real ``ballot-guard`` commands and checks every exit code.
"""
