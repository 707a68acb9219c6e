// The `systemd` RuntimeClass handler of the local test cluster: a wrapper around runc.
module deploy.local/toolchain/cluster/systemd-runtime

go 1.26.0
