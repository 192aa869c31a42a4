"""One property run in a fresh process state: the interpreter, the fork server
(standard library only, run under the project's interpreter), the OS sandbox.
"""
