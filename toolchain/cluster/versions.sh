# Versions of the local test cluster's programs (sourced by build.sh and test/cluster/*).
# The Go tools modules beside this file pin the same versions; keep them in step.
KUBERNETES_VERSION=1.36.3
ETCD_VERSION=3.6.16
CONTAINERD_VERSION=2.2.9
RUNC_VERSION=1.4.4
CNI_PLUGINS_VERSION=1.10.0
KUBE_ROUTER_VERSION=2.1.0
CRICTL_VERSION=1.37.0
