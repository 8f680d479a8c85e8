"""kube-scheduler's plugins as drasat models them: node filters, node resources, scores, dynamic resources."""
