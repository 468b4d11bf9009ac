// rollouts-evaluate: what Argo Rollouts' own code makes of a gate, for the engine tier
// (engine-promtool, docs/operations/e2e.md). It reads a JSON list of cases from stdin, each a
// ClusterAnalysisTemplate spec as the program declares it, the analysis arguments a Rollout passes
// it, the Rollout's name, namespace and latest pod-template hash, and for each metric the instant
// vector's values as Prometheus sends them ("1", "NaN"; none for an empty vector). It prints, per
// case and metric, the query with the arguments resolved, and the measurement's phase and value.
//
// Nothing is restated; all of it is argo-rollouts v1.9.0: the arguments are built from the Rollout
// (utils/analysis/factory.go BuildArgumentsForRolloutAnalysisRun), merged into the template's and
// the run's metrics validated (utils/analysis/helpers.go NewAnalysisRunFromTemplates, factory.go
// ValidateMetrics) and resolved into each metric (ResolveMetricArgs), as the rollout and analysis
// controllers do; then the Prometheus provider measures (metricproviders/prometheus/prometheus.go
// Run, processResponse, utils/evaluate EvaluateResult), its client_golang API client reading the
// vector from a transport of ours in place of a Prometheus. How a run adds its measurements up
// (analysis/analysis.go) is not called here: the delivery scenarios run it in the real controller.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/argoproj/argo-rollouts/metricproviders/prometheus"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	analysisutil "github.com/argoproj/argo-rollouts/utils/analysis"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	log "github.com/sirupsen/logrus"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type gateCase struct {
	Name    string `json:"name"`
	Rollout struct {
		Name            string `json:"name"`
		Namespace       string `json:"namespace"`
		PodTemplateHash string `json:"podTemplateHash"`
	} `json:"rollout"`
	Args     []v1alpha1.AnalysisRunArgument `json:"args"`
	Template v1alpha1.AnalysisTemplateSpec  `json:"template"`
	Results  map[string][]string            `json:"results"`
}

type measured struct {
	Case    string `json:"case"`
	Metric  string `json:"metric"`
	Query   string `json:"query"`
	Phase   string `json:"phase"`
	Value   string `json:"value"`
	Message string `json:"message,omitempty"`
}

// vectorAnswer answers every request with an instant vector of the given values, in the query
// API's JSON (one series per value, each with a label of its own so that none merge).
type vectorAnswer []string

func (v vectorAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	samples := make([]map[string]any, 0, len(v))
	for i, value := range v {
		samples = append(samples, map[string]any{"metric": map[string]string{"series": fmt.Sprint(i)}, "value": []any{0, value}})
	}
	body, err := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": samples}})
	if err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
		Request:    req,
	}, nil
}

func evaluate(c gateCase) ([]measured, error) {
	rollout := &v1alpha1.Rollout{ObjectMeta: metav1.ObjectMeta{Name: c.Rollout.Name, Namespace: c.Rollout.Namespace}}
	newRS := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.DefaultRolloutUniqueLabelKey: c.Rollout.PodTemplateHash}}}
	args, err := analysisutil.BuildArgumentsForRolloutAnalysisRun(c.Args, newRS, newRS, rollout)
	if err != nil {
		return nil, fmt.Errorf("the Rollout's arguments: %w", err)
	}
	template := &v1alpha1.ClusterAnalysisTemplate{ObjectMeta: metav1.ObjectMeta{Name: c.Name}, Spec: c.Template}
	run, err := analysisutil.NewAnalysisRunFromTemplates(nil, []*v1alpha1.ClusterAnalysisTemplate{template}, args, nil, nil, nil, nil, "", c.Name, c.Rollout.Namespace)
	if err != nil {
		return nil, fmt.Errorf("the analysis run: %w", err)
	}
	if err := analysisutil.ValidateMetrics(run.Spec.Metrics); err != nil {
		return nil, fmt.Errorf("the template's metrics: %w", err)
	}
	logger := log.New()
	logger.SetOutput(io.Discard)
	out := []measured{}
	for _, metric := range run.Spec.Metrics {
		resolved, err := analysisutil.ResolveMetricArgs(metric, run.Spec.Args)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", metric.Name, err)
		}
		result, ok := c.Results[metric.Name]
		if !ok {
			return nil, fmt.Errorf("no result given for metric %s", metric.Name)
		}
		client, err := api.NewClient(api.Config{Address: "http://prometheus.invalid", RoundTripper: vectorAnswer(result)})
		if err != nil {
			return nil, err
		}
		provider, err := prometheus.NewPrometheusProvider(v1.NewAPI(client), *log.NewEntry(logger), *resolved)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", metric.Name, err)
		}
		m := provider.Run(run, *resolved)
		out = append(out, measured{Case: c.Name, Metric: metric.Name, Query: resolved.Provider.Prometheus.Query, Phase: string(m.Phase), Value: m.Value, Message: m.Message})
	}
	return out, nil
}

func main() {
	var cases []gateCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintf(os.Stderr, "rollouts-evaluate: %v\n", err)
		os.Exit(2)
	}
	out := []measured{}
	for _, c := range cases {
		m, err := evaluate(c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "rollouts-evaluate: %s: %v\n", c.Name, err)
			os.Exit(1)
		}
		out = append(out, m...)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "rollouts-evaluate: %v\n", err)
		os.Exit(1)
	}
}
