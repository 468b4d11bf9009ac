// The cluster folder's public surface: the stack's Kubernetes provider, adoption, and a spoke's hub endpoint.
export { stackTransforms } from "./adoption";
export { eksKubeconfig } from "./eks";
export { SPOKE_READ_ENDPOINTS_OUTPUT, hubReadEndpoint } from "./hubEndpoint";
export { clusterProvider } from "./provider";
