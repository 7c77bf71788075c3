"""`podplan provision`: the cheapest new nodes with which every pending pod is placed, proven minimal
(optimizer.provision.core), beside cluster-autoscaler's estimator and least-waste expander
(optimizer.provision.estimator)."""
from .core import Added, Impossible, ProvisionAnswer, offers_of, provision, verify_answer
from .estimator import Estimate, Offer, estimate

__all__ = ["Added", "Estimate", "Impossible", "Offer", "ProvisionAnswer", "estimate", "offers_of", "provision",
           "verify_answer"]
