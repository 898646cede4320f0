// Package openshiftassistedconfig reconciles OpenshiftAssistedConfigs: for
// the Machine owning a config it creates an InfraEnv bound to the cluster's
// ClusterDeployment, holds workers back until the install accepts day-2
// hosts, and once assisted-service has built the discovery image stores the
// discovery ignition as the Machine's bootstrap data Secret, reporting it
// through the Cluster API v1beta2 bootstrap contract. On deletion it
// removes the InfraEnv and its Agents.
//
// It must not import anything of the lab.
package openshiftassistedconfig
