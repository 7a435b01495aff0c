package visibility

import (
	"context"
	"crypto/tls"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	registryrest "k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/component-base/compatibility"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"

	"github.com/sluicehq/sluice/apis/visibility/openapi"
	"github.com/sluicehq/sluice/apis/visibility/v1beta1"
	"github.com/sluicehq/sluice/apis/visibility/v1beta2"
)

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// apiserverVersion is the Kubernetes version of k8s.io/apiserver in
// go.mod: what the server reports at /version.
const apiserverVersion = "1.37"

// Options say where and how the server listens.
type Options struct {
	// BindAddress and BindPort: where to listen (visibilityServer in the
	// configuration; all addresses and 8082 by default).
	BindAddress string
	BindPort    int
	// CertDir holds the serving certificate (tls.crt, tls.key); empty: a
	// self-signed one is made in WorkDir. The API server reaches the server
	// through the APIService, whose caBundle the certificate rotator sets.
	CertDir string
	// WorkDir is where the server keeps its files (the self-signed
	// certificate, the kubeconfig of its delegated checks).
	WorkDir string
}

// Server is the visibility API server, run as a manager runnable on every
// replica.
type Server struct {
	server  *genericapiserver.GenericAPIServer
	serving *genericapiserver.SecureServingInfo
	// certFile and keyFile are the serving certificate, reread when they
	// change (the rotator rewrites them).
	certFile, keyFile string
}

// New builds the server on source. Requests are authenticated and
// authorized by the cluster's API server (front-proxy client certificates
// from the aggregation layer, TokenReview, SubjectAccessReview), as every
// aggregated API server does.
//
// New reads the cluster's authentication ConfigMap: with the API server
// out of reach it fails, and may be called again (the port it bound is
// released).
func New(restConfig *rest.Config, source Source, opts Options) (_ *Server, err error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1beta2.AddToScheme, v1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("registering the visibility types: %w", err)
		}
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	codecs := serializer.NewCodecFactory(scheme)

	cfg := genericapiserver.NewRecommendedConfig(codecs)
	defer func() {
		if err != nil && cfg.SecureServing != nil && cfg.SecureServing.Listener != nil {
			_ = cfg.SecureServing.Listener.Close()
		}
	}()
	// The version of the apiserver library sluice is built with.
	cfg.EffectiveVersion = compatibility.NewEffectiveVersionFromString(apiserverVersion, "", "")
	// The API server needs the kinds' schemas to serve the group.
	namer := openapinamer.NewDefinitionNamer(scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title, cfg.OpenAPIConfig.Info.Version = "sluice visibility", apiserverVersion
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title, cfg.OpenAPIV3Config.Info.Version = "sluice visibility", apiserverVersion
	certFile, keyFile, err := applyOptions(cfg, restConfig, opts)
	if err != nil {
		return nil, err
	}
	server, err := cfg.Complete().New("sluice-visibility", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("creating the visibility server: %w", err)
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(v1beta2.GroupVersion.Group, scheme, runtime.NewParameterCodec(scheme), codecs)
	group.PrioritizedVersions = []schema.GroupVersion{v1beta2.GroupVersion, v1beta1.GroupVersion}
	for name, v := range versions {
		group.VersionedResourcesStorageMap[name] = map[string]registryrest.Storage{
			"clusterqueues":                  &parentREST{v: v, singular: "clusterqueue"},
			"clusterqueues/pendingworkloads": &pendingREST{v: v, source: source},
			"localqueues":                    &parentREST{v: v, namespaced: true, singular: "localqueue"},
			"localqueues/pendingworkloads":   &pendingREST{v: v, source: source, namespaced: true},
		}
	}
	if err := server.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("installing visibility.kueue.x-k8s.io: %w", err)
	}
	return &Server{server: server, serving: cfg.SecureServing, certFile: certFile, keyFile: keyFile}, nil
}

// applyOptions sets serving (the listener, the certificate files it
// returns) and the delegated checks. The delegating
// options read a kubeconfig file (or the in-cluster account): the
// manager's own connection is written to one in WorkDir.
func applyOptions(cfg *genericapiserver.RecommendedConfig, restConfig *rest.Config, opts Options) (certFile, keyFile string, err error) {
	kubeconfig := filepath.Join(opts.WorkDir, "kubeconfig")
	if err := writeKubeconfig(restConfig, kubeconfig); err != nil {
		return "", "", err
	}
	serving := genericoptions.NewSecureServingOptions().WithLoopback()
	serving.BindPort = opts.BindPort
	if opts.BindAddress != "" {
		if serving.BindAddress = net.ParseIP(opts.BindAddress); serving.BindAddress == nil {
			return "", "", fmt.Errorf("visibilityServer.bindAddress: %q is not an IP address", opts.BindAddress)
		}
	}
	if opts.CertDir != "" {
		serving.ServerCert.CertKey.CertFile = filepath.Join(opts.CertDir, "tls.crt")
		serving.ServerCert.CertKey.KeyFile = filepath.Join(opts.CertDir, "tls.key")
	} else {
		serving.ServerCert.CertDirectory = filepath.Join(opts.WorkDir, "certs")
		if err := serving.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
			return "", "", fmt.Errorf("making the visibility server's self-signed certificate: %w", err)
		}
	}
	if err := serving.ApplyTo(&cfg.SecureServing, &cfg.LoopbackClientConfig); err != nil {
		return "", "", fmt.Errorf("visibility server serving: %w", err)
	}
	authn := genericoptions.NewDelegatingAuthenticationOptions()
	authn.RemoteKubeConfigFile = kubeconfig
	if err := authn.ApplyTo(&cfg.Authentication, cfg.SecureServing, cfg.OpenAPIConfig); err != nil {
		return "", "", fmt.Errorf("visibility server authentication: %w", err)
	}
	authz := genericoptions.NewDelegatingAuthorizationOptions()
	authz.RemoteKubeConfigFile = kubeconfig
	if err := authz.ApplyTo(&cfg.Authorization); err != nil {
		return "", "", fmt.Errorf("visibility server authorization: %w", err)
	}
	return serving.ServerCert.CertKey.CertFile, serving.ServerCert.CertKey.KeyFile, nil
}

// writeKubeconfig writes restConfig's connection (server, CA, client
// credentials or token file) to path, readable by this user only.
func writeKubeconfig(restConfig *rest.Config, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the visibility server's directory: %w", err)
	}
	c := restConfig
	kc := clientcmdapi.NewConfig()
	kc.Clusters["cluster"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthority: c.CAFile, CertificateAuthorityData: c.CAData,
		InsecureSkipTLSVerify: c.Insecure, TLSServerName: c.ServerName}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificate: c.CertFile, ClientCertificateData: c.CertData,
		ClientKey: c.KeyFile, ClientKeyData: c.KeyData, Token: c.BearerToken, TokenFile: c.BearerTokenFile,
		Username: c.Username, Password: c.Password,
		Impersonate: c.Impersonate.UserName, ImpersonateUID: c.Impersonate.UID, ImpersonateGroups: c.Impersonate.Groups, ImpersonateUserExtra: c.Impersonate.Extra}
	kc.Contexts["default"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "user"}
	kc.CurrentContext = "default"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing the visibility server's kubeconfig: %w", err)
	}
	return os.Chmod(path, 0o600)
}

// Start serves until ctx ends. The API machinery (handlers, delegated
// authentication and authorization, post-start hooks) is k8s.io/apiserver's;
// the TLS listener is sluice's own, because the generic server's swaps its
// tls.Config while its certificate controller copies it (a data race the
// race detector reports at every start). The handshake asks for a client
// certificate without checking it: the request-header authenticator checks
// the aggregation layer's certificate against the front-proxy CA itself.
func (s *Server) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("visibility")
	prepared := s.server.PrepareRun()
	// The cluster's client CAs and request-header settings, read from
	// kube-system's extension-apiserver-authentication ConfigMap, kept
	// current.
	if runner, ok := s.serving.ClientCA.(dynamiccertificates.ControllerRunner); ok {
		if err := runner.RunOnce(ctx); err != nil {
			log.Error(err, "reading the cluster's client CAs; retrying")
		}
		go runner.Run(ctx, 1)
	}
	watcher, err := certwatcher.New(s.certFile, s.keyFile)
	if err != nil {
		return fmt.Errorf("reading the visibility server's certificate: %w", err)
	}
	go func() {
		if err := watcher.Start(ctx); err != nil {
			log.Error(err, "watching the visibility server's certificate")
		}
	}()
	prepared.RunPostStartHooks(ctx)
	server := &http.Server{
		Handler:           s.server.Handler,
		ReadHeaderTimeout: 32 * time.Second,
		// Failed handshakes (probes that hang up) at debug level, not on
		// stderr.
		ErrorLog: stdlog.New(logWriter{log.V(1)}, "", 0),
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: watcher.GetCertificate,
			ClientAuth:     tls.RequestClientCert,
			NextProtos:     []string{"h2", "http/1.1"},
		},
	}
	errs := make(chan error, 1)
	go func() { errs <- server.ServeTLS(s.serving.Listener, "", "") }()
	select {
	case err := <-errs:
		return fmt.Errorf("serving the visibility API: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return server.Shutdown(shutdownCtx)
}

// logWriter writes the HTTP server's messages to a logger.
type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

// NeedLeaderElection is false: every replica serves (see the manager for
// how requests reach the one that knows the queues).
func (*Server) NeedLeaderElection() bool { return false }
