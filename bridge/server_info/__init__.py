"""What ``initialize`` says about the server: :mod:`.text` (plain, bounded spec text), :mod:`.icons`, :mod:`.identity`.

Light on purpose: :mod:`.text` and :mod:`.icons` are part of the contract the generator shares.
"""
