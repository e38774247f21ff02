package s3

import (
	"cmp"
	"path/filepath"

	"github.com/distributor-dev/distributor/internal/storage/objstore"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// newCredentials returns the standard AWS credential chain, reading the
// environment only through getenv:
//
//  1. AWS_ACCESS_KEY_ID (or AWS_ACCESS_KEY), AWS_SECRET_ACCESS_KEY (or
//     AWS_SECRET_KEY) and the optional AWS_SESSION_TOKEN;
//  2. the shared credentials file, AWS_SHARED_CREDENTIALS_FILE or
//     ~/.aws/credentials, profile AWS_PROFILE or "default";
//  3. the instance, container or EKS role (IAM). minio-go's IAM provider
//     also consults the process environment for its container and web
//     identity variables.
//
// The first provider that yields credentials wins. Nothing here formats
// or logs the secrets.
func newCredentials(getenv func(string) string) *credentials.Credentials {
	getenv = objstore.Getenv(getenv)
	providers := []credentials.Provider{&credentials.Static{Value: credentials.Value{ // anonymous, skipped, unless both are set
		AccessKeyID:     cmp.Or(getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_ACCESS_KEY")),
		SecretAccessKey: cmp.Or(getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SECRET_KEY")),
		SessionToken:    getenv("AWS_SESSION_TOKEN"), SignerType: credentials.SignatureV4}}}
	file := getenv("AWS_SHARED_CREDENTIALS_FILE")
	if home := getenv("HOME"); file == "" && home != "" {
		file = filepath.Join(home, ".aws", "credentials")
	}
	if file != "" {
		providers = append(providers, &credentials.FileAWSCredentials{Filename: file, Profile: cmp.Or(getenv("AWS_PROFILE"), "default")})
	}
	iam := &credentials.IAM{Region: cmp.Or(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))}
	iam.Container.AuthorizationToken = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
	iam.Container.AuthorizationTokenFile = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
	iam.Container.CredentialsRelativeURI = getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
	iam.Container.CredentialsFullURI = getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
	iam.EKSIdentity.TokenFile = getenv("AWS_WEB_IDENTITY_TOKEN_FILE")
	iam.EKSIdentity.RoleARN = getenv("AWS_ROLE_ARN")
	iam.EKSIdentity.RoleSessionName = getenv("AWS_ROLE_SESSION_NAME")
	providers = append(providers, iam)
	return credentials.NewChainCredentials(providers)
}
