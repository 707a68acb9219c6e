// OpenTofu's own tests of its http backend client, run against a `deploy state serve`
// backend instead of the test's stub server. test/integration/state-opentofu-client/build.sh
// copies this file into OpenTofu's http backend package (v1.12.6) and builds the test binary;
// test/integration/state-opentofu-client.test.ts runs it with DEPLOY_STATE_URL set.
package http

import (
	"net/url"
	"os"
	"testing"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/opentofu/opentofu/internal/states/remote"
)

func TestDeployStateServe(t *testing.T) {
	base := os.Getenv("DEPLOY_STATE_URL")
	if base == "" {
		t.Fatal("DEPLOY_STATE_URL is not set: the base URL of a deploy state serve backend")
	}
	state, err := url.Parse(base + "/opentofu-client")
	if err != nil {
		t.Fatal(err)
	}
	// the same calls as TestHTTPClient: Put (POST), Get, Delete, Get == nil; then with PUT
	remote.TestClient(t, &httpClient{URL: state, Client: retryablehttp.NewClient()})
	remote.TestClient(t, &httpClient{URL: state, UpdateMethod: "PUT", Client: retryablehttp.NewClient()})
	// two clients: one lock at a time, a LockError naming the holder, unlock, relock
	locks, err := url.Parse(base + "/opentofu-locks")
	if err != nil {
		t.Fatal(err)
	}
	client := func() *httpClient {
		return &httpClient{URL: locks, UpdateMethod: "PUT", LockURL: locks, LockMethod: "LOCK", UnlockURL: locks, UnlockMethod: "UNLOCK", Client: retryablehttp.NewClient()}
	}
	remote.TestRemoteLocks(t, client(), client())
}
