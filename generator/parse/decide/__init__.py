"""What the generator decides for the model beyond the spec's words: annotations, constants, credential notes."""
