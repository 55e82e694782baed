@_exported public import Revertible
