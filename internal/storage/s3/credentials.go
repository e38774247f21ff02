package s3

import (
	"cmp"
	"errors"
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
	providers := []credentials.Provider{&envProvider{getenv: getenv}}
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

// envProvider is minio-go's EnvAWS reading through getenv.
type envProvider struct {
	getenv    func(string) string
	retrieved bool
}

var errNoEnvCredentials = errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")

func (e *envProvider) Retrieve() (credentials.Value, error) {
	return e.RetrieveWithCredContext(nil)
}

func (e *envProvider) RetrieveWithCredContext(*credentials.CredContext) (credentials.Value, error) {
	e.retrieved = false
	id := cmp.Or(e.getenv("AWS_ACCESS_KEY_ID"), e.getenv("AWS_ACCESS_KEY"))
	secret := cmp.Or(e.getenv("AWS_SECRET_ACCESS_KEY"), e.getenv("AWS_SECRET_KEY"))
	if id == "" || secret == "" {
		return credentials.Value{SignerType: credentials.SignatureAnonymous}, errNoEnvCredentials
	}
	e.retrieved = true
	return credentials.Value{
		AccessKeyID:     id,
		SecretAccessKey: secret,
		SessionToken:    e.getenv("AWS_SESSION_TOKEN"),
		SignerType:      credentials.SignatureV4,
	}, nil
}

func (e *envProvider) IsExpired() bool { return !e.retrieved }
