#include <phasescale/model/crbm.hpp>
#include <phasescale/model/error.hpp>
#include <phasescale/model/random.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

namespace phasescale::model {
namespace {

using Eigen::Dynamic;
using Eigen::RowMajor;

// Compile-time sizes for the kernels: the shapes used in practice get fixed-size Eigen code
// (unrolled, vectorised, no heap), everything else the dynamic fallback. Both compute the same
// expressions; a given shape always takes the same path, so results are reproducible.
template <int NV, int NH, int NC>
struct Shape {
    static constexpr int vis = NV, hid = NH, cond = NC;
};

template <typename F>
decltype(auto) with_shape(const Crbm& crbm, F&& f) {
    const int v = crbm.n_vis, h = crbm.n_hid, s = crbm.n_his;
    if (v == 8 && h == 10 && s == 3) return f(Shape<8, 10, 24>{});  // AI4DL's model
    if (v == 2 && h == 10 && s == 3) return f(Shape<2, 10, 6>{});   // phasescale's default model
    return f(Shape<Dynamic, Dynamic, Dynamic>{});
}

template <typename S>
struct Views {
    using MatHV = Eigen::Matrix<double, S::hid, S::vis, RowMajor>;
    using MatVC = Eigen::Matrix<double, S::vis, S::cond, RowMajor>;
    using MatHC = Eigen::Matrix<double, S::hid, S::cond, RowMajor>;
    using VecV = Eigen::Matrix<double, S::vis, 1>;
    using VecH = Eigen::Matrix<double, S::hid, 1>;
    using VecC = Eigen::Matrix<double, S::cond, 1>;
};

// c[j * n_his + i] = z[t - n_his + i][j], where `row` points at z_t.
template <typename VecC>
void gather_history(const double* row, int n_vis, int n_his, VecC& cond) {
    const double* oldest = row - static_cast<std::ptrdiff_t>(n_his) * n_vis;
    for (int i = 0; i < n_his; ++i) {
        for (int j = 0; j < n_vis; ++j) cond[j * n_his + i] = oldest[i * n_vis + j];
    }
}

template <typename Vec>
void sigmoid_in_place(Vec& x) {
    x = (1.0 + (-x.array()).exp()).inverse().matrix();
}

// Hidden activations of `count` consecutive samples starting at `row` (each with n_his samples
// before it in memory), written to `out` (count x n_hid, row-major).
template <typename S>
void hidden_rows(const Crbm& c, const double* row, std::size_t count, double* out) {
    using V = Views<S>;
    Eigen::Map<const typename V::MatHV> W(c.W.data(), c.n_hid, c.n_vis);
    Eigen::Map<const typename V::MatHC> B(c.B.data(), c.n_hid, c.n_cond());
    Eigen::Map<const typename V::VecH> h_bias(c.h_bias.data(), c.n_hid);
    typename V::VecC cond;
    cond.resize(c.n_cond());
    typename V::VecH h;
    h.resize(c.n_hid);
    for (std::size_t r = 0; r < count; ++r, row += c.n_vis, out += c.n_hid) {
        gather_history(row, c.n_vis, c.n_his, cond);
        Eigen::Map<const typename V::VecV> z(row, c.n_vis);
        h.noalias() = W * z;
        h.noalias() += B * cond;
        h += h_bias;
        sigmoid_in_place(h);
        Eigen::Map<typename V::VecH>(out, c.n_hid) = h;
    }
}

// Views of the five parameter blocks (of the CRBM itself or of a gradient accumulator).
template <typename S>
struct Params {
    using V = Views<S>;
    Eigen::Map<typename V::MatHV> W;
    Eigen::Map<typename V::MatVC> A;
    Eigen::Map<typename V::MatHC> B;
    Eigen::Map<typename V::VecV> v_bias;
    Eigen::Map<typename V::VecH> h_bias;

    explicit Params(Crbm& c)
        : W(c.W.data(), c.n_hid, c.n_vis),
          A(c.A.data(), c.n_vis, c.n_cond()),
          B(c.B.data(), c.n_hid, c.n_cond()),
          v_bias(c.v_bias.data(), c.n_vis),
          h_bias(c.h_bias.data(), c.n_hid) {}
};

// One slice of contrastive divergence: the positive and negative statistics, kept until added
// (scaled) to the parameters or to a gradient accumulator.
template <typename S>
class CdStep {
    using V = Views<S>;

public:
    CdStep(Crbm& crbm, int k) : crbm_(crbm), params_(crbm), k_(k) {
        const int nv = crbm.n_vis, nh = crbm.n_hid, nc = crbm.n_cond();
        cond_.resize(nc);
        v_pos_.resize(nv);
        v_neg_.resize(nv);
        v_bias_.resize(nv);
        dv_.resize(nv);
        dh_.resize(nh);
        h_pos_.resize(nh);
        h_neg_.resize(nh);
        h_bias_.resize(nh);
    }

    // Runs CD-k on the slice ending at `row`; returns |v - v_reconstructed|_2 after one step.
    double run(const double* row) {
        gather_history(row, crbm_.n_vis, crbm_.n_his, cond_);
        v_pos_ = Eigen::Map<const typename V::VecV>(row, crbm_.n_vis);
        // The history's contributions do not change along the chain: compute them once.
        h_bias_ = params_.h_bias;
        h_bias_.noalias() += params_.B * cond_;
        v_bias_ = params_.v_bias;
        v_bias_.noalias() += params_.A * cond_;

        h_pos_.noalias() = params_.W * v_pos_;
        h_pos_ += h_bias_;
        sigmoid_in_place(h_pos_);
        h_neg_ = h_pos_;
        double error = 0;
        for (int step = 0; step < k_; ++step) {
            v_neg_.noalias() = params_.W.transpose() * h_neg_;
            v_neg_ += v_bias_;
            if (step == 0) error = (v_pos_ - v_neg_).norm();
            h_neg_.noalias() = params_.W * v_neg_;
            h_neg_ += h_bias_;
            sigmoid_in_place(h_neg_);
        }
        return error;
    }

    // target += rate * (positive - negative statistics) of the last run.
    void add_to(Params<S>& target, double rate) {
        dv_ = rate * (v_pos_ - v_neg_);
        dh_ = rate * (h_pos_ - h_neg_);
        target.W.noalias() += (rate * h_pos_) * v_pos_.transpose();
        target.W.noalias() -= (rate * h_neg_) * v_neg_.transpose();
        target.A.noalias() += dv_ * cond_.transpose();
        target.B.noalias() += dh_ * cond_.transpose();
        target.v_bias += dv_;
        target.h_bias += dh_;
    }

private:
    Crbm& crbm_;
    Params<S> params_;
    int k_;
    typename V::VecC cond_;
    typename V::VecV v_pos_, v_neg_, v_bias_, dv_;
    typename V::VecH h_pos_, h_neg_, h_bias_, dh_;
};

Crbm zeros_like(const Crbm& c) {
    Crbm z = c;
    z.W.setZero();
    z.A.setZero();
    z.B.setZero();
    z.v_bias.setZero();
    z.h_bias.setZero();
    return z;
}

// params += step for the update of a mini-batch: gradient averaged over the batch, optional L2
// decay on the weights, optional momentum (velocity = momentum * velocity + rate * gradient).
void apply_batch(Crbm& crbm, Crbm& gradient, Crbm& velocity, int batch_size,
                 const CrbmTrainOptions& o) {
    const double mean = 1.0 / batch_size;
    auto update = [&](auto& param, auto& grad, auto& vel, bool decay) {
        grad *= mean;
        if (decay && o.weight_decay > 0) grad -= o.weight_decay * param;
        if (o.momentum > 0) {
            vel = o.momentum * vel + o.learning_rate * grad;
            param += vel;
        } else {
            param += o.learning_rate * grad;
        }
        grad.setZero();
    };
    update(crbm.W, gradient.W, velocity.W, true);
    update(crbm.A, gradient.A, velocity.A, true);
    update(crbm.B, gradient.B, velocity.B, true);
    update(crbm.v_bias, gradient.v_bias, velocity.v_bias, false);
    update(crbm.h_bias, gradient.h_bias, velocity.h_bias, false);
}

void check_options(const CrbmTrainOptions& o) {
    auto fail = [](const std::string& what) { throw InputError("CRBM training: " + what); };
    if (o.epochs < 1) fail("epochs must be at least 1");
    if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate))
        fail("learning rate must be a positive number");
    if (o.batch < 1) fail("batch size must be at least 1");
    if (o.cd_steps < 1) fail("CD steps must be at least 1");
    if (!(o.momentum >= 0 && o.momentum < 1)) fail("momentum must be in [0, 1)");
    if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay))
        fail("weight decay must be a non-negative number");
    if (o.patience < 0) fail("patience must not be negative");
}

template <typename S>
CrbmTrainResult train(Crbm& crbm, const std::vector<const double*>& slice_rows,
                      const CrbmTrainOptions& o,
                      const std::function<void(const EpochReport&)>& on_epoch) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    CrbmTrainResult result;
    result.slices = slice_rows.size();

    CdStep<S> step(crbm, o.cd_steps);
    Params<S> params(crbm);
    // Plain SGD on single slices (the AI4DL reference) updates the parameters directly; anything
    // else goes through a gradient accumulator.
    const bool direct = o.batch == 1 && o.momentum == 0 && o.weight_decay == 0;
    Crbm gradient = zeros_like(crbm), velocity = zeros_like(crbm);
    Params<S> gradient_view(gradient);

    std::vector<const double*> order = slice_rows;
    Random random(o.seed);
    double best = std::numeric_limits<double>::infinity();
    int epochs_without_improvement = 0;
    for (int epoch = 1; epoch <= o.epochs; ++epoch) {
        random.shuffle(order);
        double error_sum = 0;
        int in_batch = 0;
        for (const double* row : order) {
            error_sum += step.run(row);
            if (direct) {
                step.add_to(params, o.learning_rate);
                continue;
            }
            step.add_to(gradient_view, 1.0);
            if (++in_batch == o.batch) {
                apply_batch(crbm, gradient, velocity, in_batch, o);
                in_batch = 0;
            }
        }
        if (in_batch > 0) apply_batch(crbm, gradient, velocity, in_batch, o);

        const double error = error_sum / static_cast<double>(order.size());
        result.reconstruction_error_per_epoch.push_back(error);
        result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (on_epoch) on_epoch(EpochReport{epoch, o.epochs, error, result.seconds});
        if (!std::isfinite(error)) {
            throw InputError("CRBM training diverged at epoch " + std::to_string(epoch) +
                             " (reconstruction error is not finite): lower the learning rate");
        }
        if (error < best - o.min_improvement) {
            best = error;
            epochs_without_improvement = 0;
        } else if (o.patience > 0 && ++epochs_without_improvement >= o.patience) {
            result.stopped_early = epoch < o.epochs;
            break;
        }
    }
    return result;
}

}  // namespace

Crbm Crbm::initialise(int n_vis, int n_hid, int n_his, std::uint64_t seed, double sigma) {
    if (n_vis < 1 || n_hid < 1 || n_his < 1) {
        throw InputError("CRBM: visible, hidden and history sizes must be at least 1 (got " +
                         std::to_string(n_vis) + ", " + std::to_string(n_hid) + ", " +
                         std::to_string(n_his) + ")");
    }
    Crbm c;
    c.n_vis = n_vis;
    c.n_hid = n_hid;
    c.n_his = n_his;
    Random random(seed);
    const double scale = sigma / (n_vis * n_his);
    auto normal = [&](int rows, int cols) {
        Matrix m(rows, cols);
        for (int r = 0; r < rows; ++r)
            for (int k = 0; k < cols; ++k) m(r, k) = scale * random.normal();
        return m;
    };
    c.W = normal(n_hid, n_vis);
    c.A = normal(n_vis, c.n_cond());
    c.B = normal(n_hid, c.n_cond());
    c.v_bias = Vector::Zero(n_vis);
    c.h_bias = Vector::Zero(n_hid);
    return c;
}

Matrix hidden_activations(const Crbm& crbm, const Matrix& z) {
    if (z.cols() != crbm.n_vis) {
        throw InputError("CRBM: samples have " + std::to_string(z.cols()) +
                         " features, model has " + std::to_string(crbm.n_vis));
    }
    const std::size_t rows = static_cast<std::size_t>(z.rows());
    const std::size_t his = static_cast<std::size_t>(crbm.n_his);
    if (rows <= his) return Matrix(0, crbm.n_hid);
    Matrix h(rows - his, crbm.n_hid);
    with_shape(crbm, [&](auto shape) {
        hidden_rows<decltype(shape)>(crbm, z.row(crbm.n_his).data(), rows - his, h.data());
    });
    return h;
}

CrbmStream::CrbmStream(const Crbm& crbm) : crbm_(&crbm), ring_(crbm.n_his + 1, crbm.n_vis) {}

bool CrbmStream::push(const double* z, double* h) {
    const std::size_t capacity = static_cast<std::size_t>(crbm_->n_his) + 1;
    // Keep the window contiguous and in time order, as the batched kernel reads it.
    if (seen_ < capacity) {
        std::copy(z, z + crbm_->n_vis, ring_.row(static_cast<Eigen::Index>(seen_)).data());
    } else {
        ring_.topRows(crbm_->n_his) = ring_.bottomRows(crbm_->n_his).eval();
        std::copy(z, z + crbm_->n_vis, ring_.row(crbm_->n_his).data());
    }
    ++seen_;
    if (seen_ < capacity) return false;
    with_shape(*crbm_, [&](auto shape) {
        hidden_rows<decltype(shape)>(*crbm_, ring_.row(crbm_->n_his).data(), 1, h);
    });
    return true;
}

double CrbmTrainResult::final_reconstruction_error() const {
    return reconstruction_error_per_epoch.empty() ? std::numeric_limits<double>::quiet_NaN()
                                                  : reconstruction_error_per_epoch.back();
}

CrbmTrainResult train_crbm(Crbm& crbm, const std::vector<Matrix>& executions,
                           const CrbmTrainOptions& options,
                           const std::function<void(const EpochReport&)>& on_epoch) {
    check_options(options);
    std::vector<const double*> slice_rows;
    for (const Matrix& z : executions) {
        if (z.cols() != crbm.n_vis) {
            throw InputError("CRBM training: an execution has " + std::to_string(z.cols()) +
                             " features, the CRBM has " + std::to_string(crbm.n_vis));
        }
        for (Eigen::Index t = crbm.n_his; t < z.rows(); ++t) slice_rows.push_back(z.row(t).data());
    }
    if (slice_rows.empty()) {
        throw InputError("CRBM training: no execution has more than " + std::to_string(crbm.n_his) +
                         " samples (the history length), so there is nothing to train on");
    }
    return with_shape(crbm, [&](auto shape) {
        return train<decltype(shape)>(crbm, slice_rows, options, on_epoch);
    });
}

}  // namespace phasescale::model
