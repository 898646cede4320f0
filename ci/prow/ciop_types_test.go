package prow

// The part of ci-operator's configuration schema (openshift/ci-tools
// pkg/api) that paritylab's jobs use. The loaders decode strictly: a key
// these types lack fails the test, so a typo cannot pass unnoticed; a key
// ci-operator knows but these types lack is added here.

// ciOperatorConfig is a ReleaseBuildConfiguration.
type ciOperatorConfig struct {
	BuildRoot *buildRoot                      `json:"build_root"`
	Resources map[string]resourceRequirements `json:"resources"`
	Tests     []testStepConfiguration         `json:"tests"`
	Metadata  metadata                        `json:"zz_generated_metadata"`
}

type buildRoot struct {
	ImageStreamTag *imageStreamTag `json:"image_stream_tag,omitempty"`
	ProjectImage   *projectImage   `json:"project_image,omitempty"`
	FromRepository bool            `json:"from_repository,omitempty"`
}

type imageStreamTag struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Tag       string `json:"tag"`
}

type projectImage struct {
	DockerfilePath    string `json:"dockerfile_path,omitempty"`
	DockerfileLiteral string `json:"dockerfile_literal,omitempty"`
	ContextDir        string `json:"context_dir,omitempty"`
}

type resourceRequirements struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

type metadata struct {
	Org     string `json:"org"`
	Repo    string `json:"repo"`
	Branch  string `json:"branch"`
	Variant string `json:"variant,omitempty"`
}

// testStepConfiguration is one entry of tests:.
type testStepConfiguration struct {
	As              string                       `json:"as"`
	Cron            *string                      `json:"cron,omitempty"`
	Interval        *string                      `json:"interval,omitempty"`
	MinimumInterval *string                      `json:"minimum_interval,omitempty"`
	Postsubmit      bool                         `json:"postsubmit,omitempty"`
	Optional        bool                         `json:"optional,omitempty"`
	Timeout         string                       `json:"timeout,omitempty"`
	Steps           *multiStageTestConfiguration `json:"steps,omitempty"`
}

// multiStageTestConfiguration is a test's steps: (or a workflow's).
type multiStageTestConfiguration struct {
	ClusterProfile           string            `json:"cluster_profile,omitempty"`
	Workflow                 string            `json:"workflow,omitempty"`
	Pre                      []testStep        `json:"pre,omitempty"`
	Test                     []testStep        `json:"test,omitempty"`
	Post                     []testStep        `json:"post,omitempty"`
	Env                      map[string]string `json:"env,omitempty"`
	AllowBestEffortPostSteps bool              `json:"allow_best_effort_post_steps,omitempty"`
	AllowSkipOnSuccess       bool              `json:"allow_skip_on_success,omitempty"`
}

// testStep references a registry step (the only kind paritylab uses).
type testStep struct {
	Ref string `json:"ref,omitempty"`
}

// refFile is a <name>-ref.yaml of the step registry.
type refFile struct {
	Ref struct {
		As            string               `json:"as"`
		From          string               `json:"from"`
		Commands      string               `json:"commands"`
		Timeout       string               `json:"timeout,omitempty"`
		GracePeriod   string               `json:"grace_period,omitempty"`
		Resources     resourceRequirements `json:"resources"`
		Env           []stepParameter      `json:"env,omitempty"`
		Documentation string               `json:"documentation,omitempty"`
	} `json:"ref"`
}

type stepParameter struct {
	Name          string  `json:"name"`
	Default       *string `json:"default,omitempty"`
	Documentation string  `json:"documentation,omitempty"`
}

// workflowFile is a <name>-workflow.yaml of the step registry.
type workflowFile struct {
	Workflow struct {
		As            string                      `json:"as"`
		Steps         multiStageTestConfiguration `json:"steps"`
		Documentation string                      `json:"documentation,omitempty"`
	} `json:"workflow"`
}
