/* An object-layer header that the violation above includes. */
