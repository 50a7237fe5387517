// A CNCF distribution registry with only the parts the OCI chart tests use: the filesystem
// storage driver and htpasswd auth (cmd/registry also links the S3, Azure and GCS drivers,
// most of its build time).
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	// Execute reports a failed command itself and exits non-zero.
	_ = registry.RootCmd.Execute()
}
