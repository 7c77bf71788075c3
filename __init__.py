"""podplan: a batch placement optimizer for Kubernetes with kube-scheduler's semantics, on OR-Tools CP-SAT.

Installed, the project's folders live under this package: `podplan.models` (the Kubernetes object model),
`podplan.optimizer` (the rules, the simulator, the CP-SAT search, the verifier) and `podplan.cli`.
"""
__version__ = "0.2.0"
