"""Tests of the interior-point solver: the problem banks against IPOPT, line search,
restoration, inertia correction, options and features, the GPU path."""
