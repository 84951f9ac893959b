//go:build tools

// Package tools records the Pulumi CLI as a dependency of this wrapper module,
// so that `go mod tidy` keeps github.com/pulumi/pulumi/pkg/v3 and its go.sum lines.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
