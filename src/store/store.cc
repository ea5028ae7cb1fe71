#include "store/store.h"

namespace ww {

uint32_t StoreImpl::intern_type(const FuncType& t) {
  // Function types are compared structurally (call_indirect and import
  // matching only need equality); stores hold few distinct types.
  for (size_t i = 0; i < types.size(); ++i)
    if (types[i] == t) return uint32_t(i);
  types.push_back(t);
  return uint32_t(types.size() - 1);
}

}  // namespace ww
