package v1beta1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sluicehq/sluice/apis/config/v1beta2"
)

// defaultPodsReadyTimeout is v1beta1's timeout when waitForPodsReady is
// enabled without one (v1beta2's is 30 minutes).
const defaultPodsReadyTimeout = 5 * time.Minute

// Converted is a v1beta1 file as v1beta2, before v1beta2's defaults.
type Converted struct {
	Config *v1beta2.Configuration
	// WaitForPodsReadyOff: the file left waitForPodsReady off, which
	// v1beta2's defaults (on since Kueue 0.19) must not undo.
	WaitForPodsReadyOff bool
	// Dropped are the v1beta1 fields set in the file that v1beta2 has no
	// place for, by path.
	Dropped []string
}

// ConvertToV1beta2 converts a v1beta1 file: fairSharing and
// waitForPodsReady are on only with enable: true (v1beta2 says so by
// presence), fair sharing without strategies gets both, an enabled
// waitForPodsReady gets v1beta1's defaults (5 minutes, blocking admission),
// and queueVisibility and integrations.podOptions are dropped.
func ConvertToV1beta2(in *Configuration) Converted {
	in = in.DeepCopy()
	out := &v1beta2.Configuration{
		TypeMeta:                     metav1.TypeMeta{APIVersion: v1beta2.Group + "/" + v1beta2.Version, Kind: v1beta2.Kind},
		Namespace:                    in.Namespace,
		ControllerManager:            in.ControllerManager,
		ManageJobsWithoutQueueName:   in.ManageJobsWithoutQueueName,
		ManagedJobsNamespaceSelector: in.ManagedJobsNamespaceSelector,
		InternalCertManagement:       in.InternalCertManagement,
		ClientConnection:             in.ClientConnection,
		MultiKueue:                   in.MultiKueue,
		AdmissionFairSharing:         in.AdmissionFairSharing,
		Resources:                    in.Resources,
		FeatureGates:                 in.FeatureGates,
		ObjectRetentionPolicies:      in.ObjectRetentionPolicies,
	}
	conv := Converted{Config: out}
	if fs := in.FairSharing; fs != nil && fs.Enable {
		out.FairSharing = &v1beta2.FairSharing{PreemptionStrategies: fs.PreemptionStrategies}
		if len(fs.PreemptionStrategies) == 0 {
			out.FairSharing.PreemptionStrategies = []v1beta2.PreemptionStrategy{v1beta2.LessThanOrEqualToFinalShare, v1beta2.LessThanInitialShare}
		}
	}
	if w := in.WaitForPodsReady; w != nil && w.Enable {
		out.WaitForPodsReady = &v1beta2.WaitForPodsReady{
			Timeout:           ptr.Deref(w.Timeout, metav1.Duration{Duration: defaultPodsReadyTimeout}),
			BlockAdmission:    ptr.To(ptr.Deref(w.BlockAdmission, true)),
			RequeuingStrategy: w.RequeuingStrategy,
			RecoveryTimeout:   w.RecoveryTimeout,
		}
	} else {
		conv.WaitForPodsReadyOff = true
	}
	if ig := in.Integrations; ig != nil {
		out.Integrations = &v1beta2.Integrations{Frameworks: ig.Frameworks, ExternalFrameworks: ig.ExternalFrameworks, LabelKeysToCopy: ig.LabelKeysToCopy}
		if ig.PodOptions != nil {
			conv.Dropped = append(conv.Dropped, "integrations.podOptions (managedJobsNamespaceSelector replaces it)")
		}
	}
	if in.QueueVisibility != nil {
		conv.Dropped = append(conv.Dropped, "queueVisibility (the visibility API replaces it)")
	}
	return conv
}
